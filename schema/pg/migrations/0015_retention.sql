CREATE TABLE "retention_runs" (
	"day" text PRIMARY KEY NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "retention_days" integer;--> statement-breakpoint
ALTER TABLE "tenants" ADD CONSTRAINT "tenants_retention_days_range" CHECK ("tenants"."retention_days" BETWEEN 1 AND 3650);