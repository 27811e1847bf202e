CREATE TABLE "sso_domain_proofs" (
	"tenant_id" uuid NOT NULL,
	"domain" text NOT NULL,
	"token" text NOT NULL,
	"verified_at" timestamp with time zone,
	"checked_at" timestamp with time zone,
	"notice_due" boolean DEFAULT false NOT NULL,
	"noticed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sso_domain_proofs_tenant_id_domain_pk" PRIMARY KEY("tenant_id","domain")
);
--> statement-breakpoint
ALTER TABLE "sso_flows" DROP CONSTRAINT "sso_flows_purpose_check";--> statement-breakpoint
ALTER TABLE "sso_domain_proofs" ADD CONSTRAINT "sso_domain_proofs_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "sso_domain_proofs_verified_idx" ON "sso_domain_proofs" USING btree ("domain") WHERE "sso_domain_proofs"."verified_at" is not null;--> statement-breakpoint
ALTER TABLE "sso_flows" ADD CONSTRAINT "sso_flows_purpose_check" CHECK ("sso_flows"."purpose" in ('sign_in', 'test', 'delete_account'));--> statement-breakpoint
-- Every domain a studio named before proofs existed becomes pending: a token each (122 random bits), not
-- verified, so it routes no sign-in until its TXT record is seen. The active configurations' domains were
-- routing sign-ins: their owners are mailed once (notice_due).
INSERT INTO "sso_domain_proofs" ("tenant_id", "domain", "token", "notice_due")
SELECT DISTINCT ON (c."tenant_id", d.domain) c."tenant_id", d.domain, replace(gen_random_uuid()::text, '-', ''), bool_or(c."state" = 'active') OVER (PARTITION BY c."tenant_id", d.domain)
FROM "sso_connections" c, unnest(c."domains") AS d(domain)
ON CONFLICT DO NOTHING;
