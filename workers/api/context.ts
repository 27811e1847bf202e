import type { ClickHouseClient } from "@clickhouse/client-web";
import type { RateLimitResult } from "../../durable-objects/rate-limiter.js";
import type { Config } from "../shared/config.js";
import type { Principal } from "../shared/credentials/principal.js";
import type { Db } from "./db.js";

export type AppEnv = {
  Bindings: Env;
  Variables: {
    /** The request's now in ms (clock.ts): windows, expiries and rolling days are computed from it. */
    now: number;
    config: Config;
    db: Db;
    ch: ClickHouseClient;
    principal: Principal | undefined;
    rateLimit: RateLimitResult | undefined;
    /** The bucket the gate charged and the credentials generation it confirmed there. */
    generation: { bucket: string; generation: number } | undefined;
  };
};
