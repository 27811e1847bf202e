import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.js";
import { defaultHook } from "../../openapi.js";
import * as list from "./list.js";

export const auditLogApp = new OpenAPIHono<AppEnv>({ defaultHook });
list.register(auditLogApp);
