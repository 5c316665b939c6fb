/* cprof's own version and the profile schema it writes. */
#ifndef CPROF_COMMON_VERSION_H
#define CPROF_COMMON_VERSION_H

#define CPROF_VERSION        "0.1.0"
#define CPROF_PROFILE_SCHEMA "cprof.profile/1"

#endif
