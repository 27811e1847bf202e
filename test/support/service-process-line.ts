/** The line test/support/service-process.ts prints once serving, before the address as JSON. */
export const ADDRESS_LINE = "SERVICE ";
