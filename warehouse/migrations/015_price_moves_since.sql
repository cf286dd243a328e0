-- Schema version 15: the table macro price_moves_since(day) (warehouse/views.sql), on which
-- the price_move view is now built and which `changes`, the history's moves and the alerts'
-- price_drop rule read. Views and macros are recreated by every writer that opens the file,
-- so a reader of a file last written before them would not find the macro: the version tells
-- it to ask for `gpuprices migrate` (or any write) first. No table changes.
-- derived tables: unchanged
SELECT 1;
