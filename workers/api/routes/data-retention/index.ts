import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.js";
import { defaultHook } from "../../openapi.js";
import * as get from "./get.js";
import * as update from "./update.js";

export const dataRetentionApp = new OpenAPIHono<AppEnv>({ defaultHook });
get.register(dataRetentionApp);
update.register(dataRetentionApp);
