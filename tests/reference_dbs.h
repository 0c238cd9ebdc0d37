/* reference_dbs.h — placeholder */
#ifndef REFERENCE_DBS_H
#define REFERENCE_DBS_H
#endif
