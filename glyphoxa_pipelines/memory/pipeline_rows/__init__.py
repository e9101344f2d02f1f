"""Store operations only the pipeline needs, one module per subject: sessions and campaigns
(`session_rows`), chunks and embeddings (`chunk_rows`), extracted knowledge
(`knowledge_rows`), consolidation (`consolidation_rows`), summary material (`summary_rows`),
and the rule they all compose for which rows a session's pipeline owns (`ownership`).

Why apart from the stores: the stores are the shared API of the realtime service and the
pipeline; these operations encode pipeline rules (what a session's pipeline owns, what a
reprocess may delete) and compose with the stores' operations into one transaction.
"""
