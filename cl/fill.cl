/*
** fill.cl — writes and reads a buffer from every compute unit of a device: the
** planner's calibration times a copy of what a device sharing host memory has
** just written this way, as a stage on it leaves an item, and a copy into what
** such a device has just read, as a stage on it reads one (runtime/buffer.c,
** db_buffer_time_written_copies and db_buffer_time_read_copies).
*/

kernel void fill_words(global uint *dst, uint n, uint seed)
{
    uint i = get_global_id(0);
    if (i < n)
        dst[i] = (i * 2654435761u) ^ seed;
}

/* Counts into *bad the words of src that are not what fill_words wrote with
** `seed`: the read that is timed also checks what the copy delivered. */
kernel void check_words(global const uint *src, uint n, uint seed, volatile global uint *bad)
{
    uint i = get_global_id(0);
    if (i < n && src[i] != ((i * 2654435761u) ^ seed))
        atomic_inc(bad);
}
