/** The API Worker's OPERATOR_SECRET in the tests (vitest.config.ts binds it). */
export const TEST_OPERATOR_SECRET = "test-operator-secret-0123456789abcdef";
