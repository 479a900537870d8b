/* The baseline: a static binary that does nothing. */
int main(void) { return 0; }
