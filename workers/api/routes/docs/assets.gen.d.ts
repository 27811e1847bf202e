// Types of the module scripts/build-client.ts writes (assets.gen.js, git-ignored, built before every
// run: dev, tests, build:check, deploy).
/** First 16 hex digits of the SHA-256 of the three files below: their URLs carry it. */
export declare const DOCS_HASH: string;
/** Swagger UI's browser bundle (swagger-ui-dist/swagger-ui-bundle.js, no source map comment). */
export declare const SWAGGER_UI_JS: string;
/** Swagger UI's stylesheet (swagger-ui-dist/swagger-ui.css). */
export declare const SWAGGER_UI_CSS: string;
/** Our initializer (workers/api/routes/docs/reference.js). */
export declare const REFERENCE_JS: string;
