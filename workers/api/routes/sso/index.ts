import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.js";
import { defaultHook } from "../../openapi.js";
import * as remove from "./delete.js";
import * as enforcement from "./enforcement.js";
import * as get from "./get.js";
import * as put from "./put.js";
import * as verify from "./verify.js";

export const ssoApp = new OpenAPIHono<AppEnv>({ defaultHook });
get.register(ssoApp);
put.register(ssoApp);
remove.register(ssoApp);
enforcement.register(ssoApp);
verify.register(ssoApp);
