import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.js";
import { defaultHook } from "../../openapi.js";
import * as create from "./create.js";
import * as remove from "./delete.js";
import * as list from "./list.js";
import * as update from "./update.js";

export const channelsApp = new OpenAPIHono<AppEnv>({ defaultHook });
list.register(channelsApp);
create.register(channelsApp);
remove.register(channelsApp);
update.register(channelsApp);
