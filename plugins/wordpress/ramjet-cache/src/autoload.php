<?php
/**
 * Class autoloader: Ramjet\Cache\Name lives in src/Name.php.
 *
 * @package RamjetCache
 */

spl_autoload_register(
	static function ( $class_name ) {
		$prefix = 'Ramjet\\Cache\\';
		if ( 0 !== strpos( $class_name, $prefix ) ) {
			return;
		}
		$file = __DIR__ . '/' . str_replace( '\\', '/', substr( $class_name, strlen( $prefix ) ) ) . '.php';
		if ( is_readable( $file ) ) {
			require_once $file;
		}
	}
);
