ALTER TABLE "threshold_profiles" ADD COLUMN "budget_share_good" double precision;--> statement-breakpoint
ALTER TABLE "threshold_profiles" ADD COLUMN "budget_share_warn" double precision;