// worksize command line (placeholder until the subcommands land).
int main() { return 0; }
