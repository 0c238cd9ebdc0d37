/*
** fill.cl — writes a buffer from every compute unit of a device: the planner's
** calibration times a copy of what a device sharing host memory has just
** written this way, as a stage on it leaves an item (runtime/buffer.c,
** db_buffer_time_written_copies).
*/

kernel void fill_words(global uint *dst, uint n, uint seed)
{
    uint i = get_global_id(0);
    if (i < n)
        dst[i] = (i * 2654435761u) ^ seed;
}
