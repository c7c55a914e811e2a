import pkg from "../package.json" with { type: "json" };

declare const BERNSTEIN_VERSION: string | undefined;

/** Injected at build time (`--define`); the package version when run from source. */
export const VERSION: string = typeof BERNSTEIN_VERSION === "string" ? BERNSTEIN_VERSION : pkg.version;
