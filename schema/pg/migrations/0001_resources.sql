CREATE TABLE "content_entries" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"content_type" text NOT NULL,
	"content_id" text NOT NULL,
	"display_name" text NOT NULL,
	"description" text,
	"category" text,
	"metadata" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "maps" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"map_id" text NOT NULL,
	"name" text NOT NULL,
	"image_key" text NOT NULL,
	"image_content_type" text NOT NULL,
	"image_width" integer NOT NULL,
	"image_height" integer NOT NULL,
	"world_min_x" double precision NOT NULL,
	"world_min_y" double precision NOT NULL,
	"world_max_x" double precision NOT NULL,
	"world_max_y" double precision NOT NULL,
	"world_min_z" double precision,
	"world_max_z" double precision,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "threshold_profiles" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"name" text NOT NULL,
	"platform" text,
	"resolution" text,
	"build_config" text,
	"gpu" text,
	"storage" text,
	"fps_good" double precision,
	"fps_warn" double precision,
	"frame_time_good" double precision,
	"frame_time_warn" double precision,
	"memory_good" double precision,
	"memory_warn" double precision,
	"gpu_time_good" double precision,
	"gpu_time_warn" double precision,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "content_entries" ADD CONSTRAINT "content_entries_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "maps" ADD CONSTRAINT "maps_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "threshold_profiles" ADD CONSTRAINT "threshold_profiles_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "content_entries_key_uq" ON "content_entries" USING btree ("project_id","content_type","content_id");--> statement-breakpoint
CREATE INDEX "content_entries_order_idx" ON "content_entries" USING btree ("project_id","content_type","display_name");--> statement-breakpoint
CREATE UNIQUE INDEX "maps_project_map_id_uq" ON "maps" USING btree ("project_id","map_id");--> statement-breakpoint
CREATE INDEX "threshold_profiles_project_idx" ON "threshold_profiles" USING btree ("project_id","created_at");