"""The block-list: built-in functions refused by name, a second layer under the catalog
rule of :mod:`.callpolicy` (used by it and by :mod:`siselect.sqltext.check`)."""

# Built-in functions a read-only transaction still allows whose effects a rollback does
# not undo (session locks, signals, server files, WAL and replication state, session
# settings), or that run SQL text this check never sees. Untrusted SQL can only call
# functions that exist, so naming these closes the gap the read-only transaction leaves.
_FORBIDDEN_FUNCTIONS = frozenset({
    "set_config", "setseed",
    "pg_cancel_backend", "pg_terminate_backend", "pg_reload_conf", "pg_rotate_logfile",
    "pg_rotate_logfile_old", "pg_log_backend_memory_contexts", "pg_promote",
    "pg_switch_wal", "pg_create_restore_point", "pg_backup_start", "pg_backup_stop",
    "pg_start_backup", "pg_stop_backup", "pg_logical_emit_message",
    "pg_create_physical_replication_slot", "pg_create_logical_replication_slot",
    "pg_copy_physical_replication_slot", "pg_copy_logical_replication_slot",
    "pg_drop_replication_slot", "pg_replication_slot_advance",
    "pg_logical_slot_get_changes", "pg_logical_slot_get_binary_changes",
    "pg_import_system_collations", "pg_extension_config_dump",
    "brin_summarize_new_values", "brin_summarize_range", "brin_desummarize_range",
    "gin_clean_pending_list",
    "lo_creat", "lo_create", "lo_import", "lo_export", "lo_from_bytea", "lo_put",
    "lo_unlink", "lo_truncate", "lo_truncate64", "lowrite",
    "query_to_xml", "query_to_xmlschema", "query_to_xml_and_xmlschema", "cursor_to_xml",
    "cursor_to_xmlschema", "ts_stat", "ts_rewrite",
})
_FORBIDDEN_PREFIXES = (
    "pg_advisory_", "pg_try_advisory_", "pg_replication_origin_", "pg_stat_reset",
    "pg_wal_replay_", "pg_file_", "dblink", "binary_upgrade_",
)


def forbidden_function(name: str) -> bool:
    """``name`` is on the block-list of functions with effects a rollback does not undo."""
    name = name.lower()
    return name in _FORBIDDEN_FUNCTIONS or name.startswith(_FORBIDDEN_PREFIXES)
