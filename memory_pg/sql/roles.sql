-- Named blocks of role checks, read by memory_pg.sql.named (one block per "-- name:").
-- Every value is a bound parameter; identifiers are fixed.

-- name: role_privileges
-- What the connected role may do with memory-pg's tables (memory_pg.roles.RolePrivileges).
SELECT current_user AS role, r.rolsuper AS superuser, r.rolbypassrls AS bypassrls,
       EXISTS (SELECT 1 FROM pg_roles g WHERE g.rolname = 'memory_pg_maintenance'
               AND pg_has_role(current_user, g.oid, 'USAGE')) AS maintenance,
       pg_has_role(current_user, c.relowner, 'USAGE') AS owner,
       pg_get_userbyid(c.relowner) AS owner_name
FROM pg_roles r, pg_class c
WHERE r.rolname = current_user AND c.oid = 'memory_pg_memories'::regclass
