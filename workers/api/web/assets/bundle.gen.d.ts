// Types of the module scripts/build-client.ts writes (bundle.gen.js, git-ignored, built before every
// run: dev, tests, build:check, deploy).
/** First 16 hex digits of the SHA-256 of the script and style: their URLs carry it. */
export declare const DASHBOARD_HASH: string;
/** The dashboard's browser bundle (workers/api/web/client/main.ts), minified ES module. */
export declare const DASHBOARD_JS: string;
/** uPlot's stylesheet. */
export declare const DASHBOARD_CSS: string;
/** First 16 hex digits of the SHA-256 of the SQL page's bundle: its URL carries it. */
export declare const SQL_HASH: string;
/** The SQL page's own bundle (workers/api/web/client/sql/page.ts with CodeMirror), minified ES module. */
export declare const SQL_JS: string;
