/** The API Worker's APP_URL in the tests (vitest.config.ts binds it): the origin of alert links. */
export const TEST_APP_URL = "https://app.telemetry.test";
