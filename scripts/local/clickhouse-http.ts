// A loopback stand-in for the ClickHouse HTTP interface, backed by chdb, so that
// Workers running in workerd can use @clickhouse/client-web against a real
// ClickHouse engine during local dev and tests.
//
// The implementation lives in ./clickhouse/; this module is its public API.
export { clickhouseQuery } from "./clickhouse/client.js";
export {
  type ClickHouseHttpOptions,
  type ClickHouseHttpServer,
  startClickHouseHttp,
} from "./clickhouse/server.js";
