/* env.h: the FATBUILD_* on/off switches, read one way (env.c). Private; symbols are hidden. */
#ifndef FB_ENV_H
#define FB_ENV_H

/* A FATBUILD_* on/off switch from the environment, read the same way for all of them: 1 when
 * it is 1, yes, true or on; 0 when 0, no, false or off (any case); -1 when unset or anything
 * else, where the caller's default holds. */
int fb_env_switch(const char *name);

#endif
