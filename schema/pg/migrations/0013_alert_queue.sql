CREATE TABLE "alert_pair_states" (
	"alert_rule_id" uuid NOT NULL,
	"threshold_profile_id" uuid NOT NULL,
	"run_at" timestamp with time zone NOT NULL,
	"evaluated_at" timestamp with time zone NOT NULL,
	"result" text NOT NULL,
	"fail_count" integer,
	"total_count" integer,
	"fail_percentage" double precision,
	"error" text,
	CONSTRAINT "alert_pair_states_alert_rule_id_threshold_profile_id_pk" PRIMARY KEY("alert_rule_id","threshold_profile_id")
);
--> statement-breakpoint
ALTER TABLE "alert_evaluation_events" ADD COLUMN "run_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "alert_evaluation_events" ADD COLUMN "pending_notifications" text;--> statement-breakpoint
ALTER TABLE "alert_pair_states" ADD CONSTRAINT "alert_pair_states_alert_rule_id_alert_rules_id_fk" FOREIGN KEY ("alert_rule_id") REFERENCES "public"."alert_rules"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_pair_states" ADD CONSTRAINT "alert_pair_states_threshold_profile_id_threshold_profiles_id_fk" FOREIGN KEY ("threshold_profile_id") REFERENCES "public"."threshold_profiles"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "alert_pair_states_profile_idx" ON "alert_pair_states" USING btree ("threshold_profile_id");--> statement-breakpoint
CREATE INDEX "alert_pair_states_run_idx" ON "alert_pair_states" USING btree ("run_at");--> statement-breakpoint
CREATE UNIQUE INDEX "alert_evaluation_events_run_idx" ON "alert_evaluation_events" USING btree ("alert_rule_id","evaluated_profile_id","run_at");--> statement-breakpoint
CREATE INDEX "alert_evaluation_events_pending_idx" ON "alert_evaluation_events" USING btree ("alert_rule_id") WHERE "alert_evaluation_events"."pending_notifications" IS NOT NULL;