CREATE TABLE `files` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`agent_id` text,
	`filename` text NOT NULL,
	`object_key` text NOT NULL,
	`content_type` text NOT NULL,
	`size` integer NOT NULL,
	`etag` text NOT NULL,
	`input_tokens` integer DEFAULT 0 NOT NULL,
	`output_tokens` integer DEFAULT 0 NOT NULL,
	`status` text NOT NULL,
	`failure_reason` text,
	`ingest_id` text NOT NULL,
	`ingest_started_at` text NOT NULL,
	`chunk_count` integer DEFAULT 0 NOT NULL,
	`text_length` integer DEFAULT 0 NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `files_team_filename_unique` ON `files` (`team_id`,`filename`);--> statement-breakpoint
CREATE INDEX `files_team_agent_idx` ON `files` (`team_id`,`agent_id`);--> statement-breakpoint
CREATE INDEX `files_status_idx` ON `files` (`status`,`ingest_started_at`);--> statement-breakpoint
CREATE TABLE `knowledge_chunks` (
	`id` integer PRIMARY KEY NOT NULL,
	`file_id` text NOT NULL,
	`team_id` text NOT NULL,
	`ingest_id` text NOT NULL,
	`seq` integer NOT NULL,
	`text` text NOT NULL,
	FOREIGN KEY (`file_id`) REFERENCES `files`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `knowledge_chunks_file_idx` ON `knowledge_chunks` (`file_id`,`ingest_id`,`seq`);