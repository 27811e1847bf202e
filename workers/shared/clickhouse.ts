import { type ClickHouseClient, createClient } from "@clickhouse/client-web";
import type { Config } from "./config.js";

/** Every table lives in this database; SQL names it explicitly rather than relying on a default. */
export const CH_DB = "telemetry";

/** `requestTimeoutMs` bounds the whole exchange, a streamed response body included. */
export function openClickHouse(config: Config, requestTimeoutMs = 30_000): ClickHouseClient {
  return createClient({
    url: config.CLICKHOUSE_URL,
    username: config.CLICKHOUSE_USER,
    password: config.CLICKHOUSE_PASSWORD,
    request_timeout: requestTimeoutMs,
    // The Worker's fetch; keep-alive is the platform's business.
    keep_alive: { enabled: false },
  });
}

/** The connection user SQL runs on: the read-only query user where one is configured. */
export function openQueryClickHouse(config: Config): ClickHouseClient {
  if (!config.CLICKHOUSE_QUERY_USER) {
    return openClickHouse(config);
  }
  return openClickHouse({
    ...config,
    CLICKHOUSE_USER: config.CLICKHOUSE_QUERY_USER,
    CLICKHOUSE_PASSWORD: config.CLICKHOUSE_QUERY_PASSWORD,
  });
}
