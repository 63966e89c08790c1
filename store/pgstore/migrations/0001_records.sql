-- Every collection's records in one table, keyed by (collection, key). Keys are bytea so
-- that their order is byte order whatever the database's collation, as store.List
-- promises; the primary key's index serves Get, List's prefix ranges and its paging.
CREATE TABLE switchyard_records (
    collection text  NOT NULL,
    key        bytea NOT NULL,
    value      bytea NOT NULL,
    PRIMARY KEY (collection, key)
);
