CREATE TABLE "build_baselines" (
	"project_id" uuid PRIMARY KEY NOT NULL,
	"build_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "build_verdicts" (
	"project_id" uuid NOT NULL,
	"build_id" text NOT NULL,
	"metric" text NOT NULL,
	"baseline_build_id" text NOT NULL,
	"baseline_pinned" boolean NOT NULL,
	"verdict" text NOT NULL,
	"diff_pct" double precision,
	"ci_low" double precision,
	"ci_high" double precision,
	"baseline_sessions" integer NOT NULL,
	"candidate_sessions" integer NOT NULL,
	"groups" jsonb NOT NULL,
	"notified" boolean DEFAULT false NOT NULL,
	"judged_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "build_verdicts_project_id_build_id_metric_pk" PRIMARY KEY("project_id","build_id","metric")
);
--> statement-breakpoint
ALTER TABLE "notification_channels" ADD COLUMN "build_regressions" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "build_baselines" ADD CONSTRAINT "build_baselines_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "build_verdicts" ADD CONSTRAINT "build_verdicts_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;