import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.js";
import { defaultHook } from "../../openapi.js";
import * as get from "./get.js";

export const whoami = new OpenAPIHono<AppEnv>({ defaultHook });
get.register(whoami);
