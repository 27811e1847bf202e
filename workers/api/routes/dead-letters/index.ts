import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.js";
import { defaultHook } from "../../openapi.js";
import * as list from "./list.js";
import * as replay from "./replay.js";

export const deadLettersApp = new OpenAPIHono<AppEnv>({ defaultHook });
list.register(deadLettersApp);
replay.register(deadLettersApp);
