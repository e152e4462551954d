CREATE TABLE `chats` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`agent_id` text NOT NULL,
	`user_id` text,
	`title` text,
	`metadata` text DEFAULT '{}' NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `chats_team_created_idx` ON `chats` (`team_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `chats_team_user_idx` ON `chats` (`team_id`,`user_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `messages` (
	`id` text PRIMARY KEY NOT NULL,
	`chat_id` text NOT NULL,
	`team_id` text NOT NULL,
	`seq` integer NOT NULL,
	`role` text NOT NULL,
	`content` text NOT NULL,
	`agent_id` text,
	`input_tokens` integer,
	`output_tokens` integer,
	`citations` text DEFAULT '[]' NOT NULL,
	`client_id` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`chat_id`) REFERENCES `chats`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `messages_chat_seq_unique` ON `messages` (`chat_id`,`seq`);--> statement-breakpoint
CREATE UNIQUE INDEX `messages_chat_client_unique` ON `messages` (`chat_id`,`client_id`);--> statement-breakpoint
CREATE INDEX `messages_team_idx` ON `messages` (`team_id`);--> statement-breakpoint
CREATE TABLE `socket_event_subscriptions` (
	`connection_id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`events` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `socket_event_subscriptions_team_idx` ON `socket_event_subscriptions` (`team_id`);