/* env.h: the one door to the environment for both libraries and both CLIs (env.c): a
 * variable's value, and the FATBUILD_* on/off switches read one way. Private; symbols are
 * hidden. */
#ifndef FB_ENV_H
#define FB_ENV_H

/* The value of the environment variable name, or NULL when it is unset: what getenv(3) gives,
 * read here so that every variable the toolkit reads is read in one file (env.c lists them;
 * tests/layout_check.sh fails on a getenv anywhere else). The pointer is the environment's:
 * valid until the variable is next set. */
const char *fb_env_get(const char *name);

/* A FATBUILD_* on/off switch from the environment, read the same way for all of them: 1 when
 * it is 1, yes, true or on; 0 when 0, no, false or off (any case); -1 when unset or anything
 * else, where the caller's default holds. */
int fb_env_switch(const char *name);

#endif
