-- Full-text index of knowledge chunks (drizzle-kit cannot express virtual tables or triggers).
-- External content: the text lives once, in knowledge_chunks; the triggers keep the index in step
-- with every insert, update and delete (also the cascades from files and teams).
-- team_id is indexed too so that a search reads only its own team's postings
-- (MATCH 'team_id : "<id>" AND (...)'); bm25 gives that column weight 0.
CREATE VIRTUAL TABLE `knowledge_fts` USING fts5(
	`text`,
	`team_id`,
	content='knowledge_chunks',
	content_rowid='id',
	tokenize='porter unicode61 remove_diacritics 2'
);
--> statement-breakpoint
CREATE TRIGGER `knowledge_chunks_ai` AFTER INSERT ON `knowledge_chunks` BEGIN
	INSERT INTO `knowledge_fts` (rowid, `text`, `team_id`) VALUES (new.`id`, new.`text`, new.`team_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `knowledge_chunks_ad` AFTER DELETE ON `knowledge_chunks` BEGIN
	INSERT INTO `knowledge_fts` (`knowledge_fts`, rowid, `text`, `team_id`) VALUES ('delete', old.`id`, old.`text`, old.`team_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `knowledge_chunks_au` AFTER UPDATE ON `knowledge_chunks` BEGIN
	INSERT INTO `knowledge_fts` (`knowledge_fts`, rowid, `text`, `team_id`) VALUES ('delete', old.`id`, old.`text`, old.`team_id`);
	INSERT INTO `knowledge_fts` (rowid, `text`, `team_id`) VALUES (new.`id`, new.`text`, new.`team_id`);
END;
