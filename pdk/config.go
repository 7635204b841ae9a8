package pdk

// Config returns the value of a plugin config key (the plugin's config
// table in wai.toml) and whether it is set.
func Config(key string) (string, bool) { return configGet(key) }
