import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.js";
import { defaultHook } from "../../openapi.js";
import * as remove from "./delete.js";
import * as list from "./list.js";
import * as listByHeader from "./list-by-header.js";
import * as upsert from "./upsert.js";

/** The registry is reachable by path id and by the X-Project-Id header. */
export const contentApp = new OpenAPIHono<AppEnv>({ defaultHook });
list.register(contentApp);
listByHeader.register(contentApp);
upsert.register(contentApp);
remove.register(contentApp);
