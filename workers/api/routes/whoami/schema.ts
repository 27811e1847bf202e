import { z } from "@hono/zod-openapi";

export const WhoamiSchema = z
  .object({
    projectId: z.string(),
    scopes: z.array(z.string()),
    projectName: z.string().optional(),
    tenantId: z.string().optional(),
    planId: z.string().optional(),
  })
  .openapi("Whoami");
