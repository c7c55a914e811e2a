import pkg from "../package.json" with { type: "json" };

declare const BERNSTEIN_VERSION: string | undefined;
declare const BERNSTEIN_COMMIT: string | undefined;

/** Injected at build time (`--define`); the package version when run from source. */
export const VERSION: string = typeof BERNSTEIN_VERSION === "string" ? BERNSTEIN_VERSION : pkg.version;

/** The git commit the binary was built from (`--define` in scripts/build.ts), or "unknown". */
export const COMMIT: string = typeof BERNSTEIN_COMMIT === "string" && BERNSTEIN_COMMIT !== "" ? BERNSTEIN_COMMIT : "unknown";

/** `bernstein --version --as-json`. */
export function versionDocument(): { ok: true; version: string; commit: string; platform: string } {
  return { ok: true, version: VERSION, commit: COMMIT, platform: `${process.platform}-${process.arch}` };
}
