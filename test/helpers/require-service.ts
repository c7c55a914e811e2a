/**
 * Tests that need something outside npm (a system package, a service such
 * as PostgreSQL or Chromium) skip with a clear message on a machine that
 * lacks it, but never in CI: `.ci/run` installs every line of
 * `.ci/system-packages` and exports BERNSTEIN_CI_REQUIRE with their names,
 * and a required need that is missing fails the test file instead.
 *
 *   describe.skipIf(!available("chromium", existsSync(CHROMIUM), `${CHROMIUM} not found`))(…)
 */
export function available(name: string, present: boolean, whyNot: string): boolean {
  if (present) return true;
  const required = (process.env.BERNSTEIN_CI_REQUIRE ?? "").split(",").map((s) => s.trim());
  if (required.includes(name)) throw new Error(`${name} is required here (BERNSTEIN_CI_REQUIRE) but not available: ${whyNot}`);
  console.warn(`skipping the ${name} tests: ${whyNot}`);
  return false;
}
