import { Hono } from "hono";
import type { AppEnv } from "../../context.js";
import * as revoke from "./revoke.js";
import * as token from "./token.js";

// Not OpenAPI routes: these are the OAuth protocol's endpoints (form in, RFC 6749 JSON out), described
// by /.well-known/oauth-authorization-server rather than by the Web API document.
export const oauthApp = new Hono<AppEnv>();
token.register(oauthApp);
revoke.register(oauthApp);
