/*
** dbs.cl — clipping-free DBS halftoning (placeholder).
*/
