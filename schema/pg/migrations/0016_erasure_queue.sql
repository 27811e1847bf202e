ALTER TABLE "erasures" ADD COLUMN "started_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "erasures" ADD COLUMN "attempts" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "erasures" ADD COLUMN "lease_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "erasures" ADD COLUMN "work" jsonb;