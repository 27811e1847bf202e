ALTER TABLE "data_exports" ADD COLUMN "rows_expected" integer;--> statement-breakpoint
ALTER TABLE "data_exports" ADD COLUMN "rows_written" integer;--> statement-breakpoint
ALTER TABLE "data_exports" ADD COLUMN "bytes_written" double precision;