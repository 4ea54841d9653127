/* commands.h: one entry point per subcommand, each in its own cmd_<name>.c. */
#ifndef ENCORE_CLI_COMMANDS_H
#define ENCORE_CLI_COMMANDS_H

int cmd_record(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_debug(int argc, char **argv);
int cmd_pack(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_inf(int argc, char **argv);
int cmd_cut(int argc, char **argv);
int cmd_sql(int argc, char **argv);
int cmd_db(int argc, char **argv);
int cmd_stable(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_export(int argc, char **argv);

#endif
