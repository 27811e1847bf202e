/** The API Worker's SSO_SECRET_KEY in the tests (vitest.config.ts binds it): 32 bytes in base64. */
export const TEST_SSO_SECRET_KEY = "dGVzdC1zc28tc2VjcmV0LWtleS0zMi1ieXRlcy1sbmc=";
