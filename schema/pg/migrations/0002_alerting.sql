CREATE TABLE "alert_evaluation_events" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"alert_rule_id" uuid NOT NULL,
	"evaluated_profile_id" uuid NOT NULL,
	"threshold_profile_id" uuid,
	"threshold_profile_name" text,
	"threshold_profile_deleted" boolean DEFAULT false NOT NULL,
	"rule_name" text NOT NULL,
	"metric" text NOT NULL,
	"status" text NOT NULL,
	"fail_count" integer NOT NULL,
	"total_count" integer NOT NULL,
	"fail_percentage" double precision NOT NULL,
	"notified" boolean NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "alert_rule_channels" (
	"alert_rule_id" uuid NOT NULL,
	"channel_id" uuid NOT NULL,
	CONSTRAINT "alert_rule_channels_alert_rule_id_channel_id_pk" PRIMARY KEY("alert_rule_id","channel_id")
);
--> statement-breakpoint
CREATE TABLE "alert_rule_profiles" (
	"alert_rule_id" uuid NOT NULL,
	"threshold_profile_id" uuid NOT NULL,
	"ordinal" integer NOT NULL,
	CONSTRAINT "alert_rule_profiles_alert_rule_id_threshold_profile_id_pk" PRIMARY KEY("alert_rule_id","threshold_profile_id")
);
--> statement-breakpoint
CREATE TABLE "notification_channels" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"name" text NOT NULL,
	"url" text NOT NULL,
	"signing_secret" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "alert_rules" ADD COLUMN "map_id" uuid NOT NULL;--> statement-breakpoint
ALTER TABLE "alert_rules" ADD COLUMN "metric" text NOT NULL;--> statement-breakpoint
ALTER TABLE "alert_rules" ADD COLUMN "threshold_level" text NOT NULL;--> statement-breakpoint
ALTER TABLE "alert_rules" ADD COLUMN "fail_percentage" double precision NOT NULL;--> statement-breakpoint
ALTER TABLE "alert_rules" ADD COLUMN "evaluation_days" integer NOT NULL;--> statement-breakpoint
ALTER TABLE "alert_rules" ADD COLUMN "cell_size" integer NOT NULL;--> statement-breakpoint
ALTER TABLE "alert_rules" ADD COLUMN "cooldown_minutes" integer NOT NULL;--> statement-breakpoint
ALTER TABLE "alert_evaluation_events" ADD CONSTRAINT "alert_evaluation_events_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_evaluation_events" ADD CONSTRAINT "alert_evaluation_events_alert_rule_id_alert_rules_id_fk" FOREIGN KEY ("alert_rule_id") REFERENCES "public"."alert_rules"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_evaluation_events" ADD CONSTRAINT "alert_evaluation_events_threshold_profile_id_threshold_profiles_id_fk" FOREIGN KEY ("threshold_profile_id") REFERENCES "public"."threshold_profiles"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_rule_channels" ADD CONSTRAINT "alert_rule_channels_alert_rule_id_alert_rules_id_fk" FOREIGN KEY ("alert_rule_id") REFERENCES "public"."alert_rules"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_rule_channels" ADD CONSTRAINT "alert_rule_channels_channel_id_notification_channels_id_fk" FOREIGN KEY ("channel_id") REFERENCES "public"."notification_channels"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_rule_profiles" ADD CONSTRAINT "alert_rule_profiles_alert_rule_id_alert_rules_id_fk" FOREIGN KEY ("alert_rule_id") REFERENCES "public"."alert_rules"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_rule_profiles" ADD CONSTRAINT "alert_rule_profiles_threshold_profile_id_threshold_profiles_id_fk" FOREIGN KEY ("threshold_profile_id") REFERENCES "public"."threshold_profiles"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notification_channels" ADD CONSTRAINT "notification_channels_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "alert_evaluation_events_project_idx" ON "alert_evaluation_events" USING btree ("project_id","created_at");--> statement-breakpoint
CREATE INDEX "alert_evaluation_events_rule_profile_idx" ON "alert_evaluation_events" USING btree ("alert_rule_id","evaluated_profile_id","created_at");--> statement-breakpoint
CREATE INDEX "alert_evaluation_events_profile_idx" ON "alert_evaluation_events" USING btree ("threshold_profile_id");--> statement-breakpoint
CREATE INDEX "alert_rule_channels_channel_idx" ON "alert_rule_channels" USING btree ("channel_id");--> statement-breakpoint
CREATE INDEX "alert_rule_profiles_profile_idx" ON "alert_rule_profiles" USING btree ("threshold_profile_id");--> statement-breakpoint
CREATE INDEX "notification_channels_project_idx" ON "notification_channels" USING btree ("project_id","created_at");--> statement-breakpoint
ALTER TABLE "alert_rules" ADD CONSTRAINT "alert_rules_map_id_maps_id_fk" FOREIGN KEY ("map_id") REFERENCES "public"."maps"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "alert_rules_project_created_idx" ON "alert_rules" USING btree ("project_id","created_at");--> statement-breakpoint
CREATE INDEX "alert_rules_map_idx" ON "alert_rules" USING btree ("map_id");