"""Parts of `bench/voice_loop.py`: scoring transcripts, the memory step alone, the encoder
window study. The script is the entry point; these modules hold what it measures with."""
