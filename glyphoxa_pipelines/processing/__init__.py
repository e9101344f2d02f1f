"""Pure transforms of the pipeline: chunking, mentions, extraction, summaries, recaps."""
