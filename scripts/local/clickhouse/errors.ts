// ClickHouse-shaped errors and the HTTP status each exception code answers with.

// Same mapping as ClickHouse's exceptionCodeToHTTPStatus, except authentication
// failures, which answer 401 here as the local stack expects.
const HTTP_STATUS_BY_CODE = new Map<number, number>([
  ...[
    6, 8, 15, 25, 26, 27, 36, 37, 38, 41, 44, 53, 62, 117, 123, 167, 168, 223, 321, 376, 427, 441, 675, 676,
  ].map((code): [number, number] => [code, 400]),
  ...[46, 47, 50, 56, 60, 63, 73, 78, 81, 115, 152, 336].map((code): [number, number] => [code, 404]),
  [194, 401],
  [516, 401],
  [497, 403],
  [159, 408],
  [229, 413],
  [48, 501],
]);

export class ClickHouseHttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    readonly type: string,
    message: string,
  ) {
    super(`Code: ${code}. DB::Exception: ${message}. (${type})`);
  }
}

export function badRequest(code: number, type: string, message: string): ClickHouseHttpError {
  return new ClickHouseHttpError(400, code, type, message);
}

export function notImplemented(message: string): ClickHouseHttpError {
  return badRequest(48, "NOT_IMPLEMENTED", `${message} is not supported by the local chdb server`);
}

export function describeError(err: unknown): { status: number; code: number; message: string } {
  if (err instanceof ClickHouseHttpError) {
    return { status: err.status, code: err.code, message: err.message };
  }
  const engineCode = (err as { clickhouseCode?: unknown } | null)?.clickhouseCode;
  const message = err instanceof Error ? err.message : String(err);
  if (typeof engineCode === "number" && message.startsWith("Code: ")) {
    return { status: HTTP_STATUS_BY_CODE.get(engineCode) ?? 500, code: engineCode, message };
  }
  return { status: 500, code: 1001, message: `Code: 1001. DB::Exception: ${message}. (STD_EXCEPTION)` };
}
