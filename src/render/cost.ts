/**
 * A run's cost as an operator reads it: `$0.0300`, or `unknown` when an
 * attempt reported no cost (a CLI that reports tokens only, with no price
 * in `models.prices`), never a `$0.0000` that reads as free. A run with
 * known and unknown costs shows the known part: `$0.0300 + unknown`.
 */
export function costLabel(usd: number, known: boolean, digits = 4): string {
  const shown = `$${usd.toFixed(digits)}`;
  if (known) return shown;
  return usd > 0 ? `${shown} + unknown` : "unknown";
}
