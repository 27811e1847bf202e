import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.js";
import { defaultHook } from "../../openapi.js";
import * as create from "./create.js";
import * as deactivate from "./deactivate.js";
import * as get from "./get.js";
import * as history from "./history.js";
import * as list from "./list.js";
import * as update from "./update.js";

export const alertsApp = new OpenAPIHono<AppEnv>({ defaultHook });
// History first: its static segment must win over the {alertId} routes registered after it.
history.register(alertsApp);
list.register(alertsApp);
create.register(alertsApp);
get.register(alertsApp);
update.register(alertsApp);
deactivate.register(alertsApp);
