<?php
/**
 * PHPUnit bootstrap: the plugin's classes with the WordPress functions they
 * call replaced by small stubs whose answers the tests set in WpStubs.
 *
 * @package RamjetCache
 */

// phpcs:disable Universal.Files.SeparateFunctionsFromOO.Mixed, WordPress.NamingConventions.PrefixAllGlobals -- WordPress's own names, stubbed.

define( 'ABSPATH', '/srv/wordpress/' );
define( 'WPINC', 'wp-includes' );

require_once dirname( __DIR__ ) . '/src/autoload.php';

/**
 * Answers of the stubbed WordPress functions, and what they were called with.
 */
final class WpStubs {
	/** @var array Options by name. */
	public static $options = array();
	/** @var array Fired actions: [name, args]. */
	public static $actions = array();
	/** @var array Requests made with wp_remote_request: [url, args]. */
	public static $requests = array();
	/** @var array|WP_Error Next response of wp_remote_request. */
	public static $response = array( 'response' => array( 'code' => 200 ), 'body' => '{}' );
	/** @var array Posts by id. */
	public static $posts = array();
	/** @var array Terms by post id: list of objects with term_id, taxonomy. */
	public static $terms = array();
	/** @var array Ancestors by term id. */
	public static $ancestors = array();
	/** @var array get_posts answers for 'before' and 'after' queries. */
	public static $adjacent = array( 'before' => array(), 'after' => array() );
	/** @var array Conditional tags that are true, e.g. array( 'is_singular' => true ). */
	public static $is = array();
	/** @var int Queried object id. */
	public static $queried = 0;
	/** @var array Query vars. */
	public static $vars = array();
	/** @var bool Whether a user is logged in. */
	public static $logged_in = false;

	/** Resets every answer. */
	public static function reset() {
		self::$options   = array();
		self::$actions   = array();
		self::$requests  = array();
		self::$response  = array( 'response' => array( 'code' => 200 ), 'body' => '{}' );
		self::$posts     = array();
		self::$terms     = array();
		self::$ancestors = array();
		self::$adjacent  = array( 'before' => array(), 'after' => array() );
		self::$is        = array();
		self::$queried   = 0;
		self::$vars      = array();
		self::$logged_in = false;
		unset( $GLOBALS['wp_query'] );
	}
}

/** Minimal WP_Error. */
class WP_Error {
	/** @var string */
	private $code;
	/** @var string */
	private $message;
	/**
	 * @param string $code    Code.
	 * @param string $message Message.
	 */
	public function __construct( $code = '', $message = '' ) {
		$this->code    = $code;
		$this->message = $message;
	}
	/** @return string */
	public function get_error_message() {
		return $this->message;
	}
	/** @return string */
	public function get_error_code() {
		return $this->code;
	}
}

function is_wp_error( $thing ) {
	return $thing instanceof WP_Error;
}
function get_option( $name, $default_value = false ) {
	return array_key_exists( $name, WpStubs::$options ) ? WpStubs::$options[ $name ] : $default_value;
}
function update_option( $name, $value, $autoload = null ) {
	WpStubs::$options[ $name ] = $value;
	return true;
}
function delete_option( $name ) {
	unset( WpStubs::$options[ $name ] );
	return true;
}
function do_action( $name, ...$args ) {
	WpStubs::$actions[] = array( $name, $args );
}
function apply_filters( $name, $value, ...$args ) {
	return $value;
}
function wp_parse_url( $url, $component = -1 ) {
	return parse_url( $url, $component ); // phpcs:ignore WordPress.WP.AlternativeFunctions.parse_url_parse_url -- this is the stub.
}
function wp_json_encode( $data ) {
	return json_encode( $data ); // phpcs:ignore WordPress.WP.AlternativeFunctions.json_encode_json_encode -- this is the stub.
}
function wp_remote_request( $url, $args ) {
	WpStubs::$requests[] = array( $url, $args );
	return WpStubs::$response;
}
function wp_remote_retrieve_response_code( $response ) {
	return $response['response']['code'];
}
function wp_remote_retrieve_body( $response ) {
	return $response['body'];
}
function get_post( $id ) {
	return isset( WpStubs::$posts[ $id ] ) ? WpStubs::$posts[ $id ] : null;
}
function get_object_taxonomies( $type, $output ) {
	return array(
		(object) array( 'name' => 'category', 'public' => true ),
		(object) array( 'name' => 'post_tag', 'public' => true ),
		(object) array( 'name' => 'post_format', 'public' => false ),
	);
}
function get_the_terms( $post_id, $taxonomy ) {
	$found = array();
	foreach ( isset( WpStubs::$terms[ $post_id ] ) ? WpStubs::$terms[ $post_id ] : array() as $term ) {
		if ( $term->taxonomy === $taxonomy ) {
			$found[] = $term;
		}
	}
	return $found ? $found : false;
}
function get_ancestors( $id, $taxonomy, $type ) {
	return isset( WpStubs::$ancestors[ $id ] ) ? WpStubs::$ancestors[ $id ] : array();
}
function get_posts( $args ) {
	$side = isset( $args['date_query'][0]['before'] ) ? 'before' : 'after';
	return WpStubs::$adjacent[ $side ];
}
function get_queried_object_id() {
	return WpStubs::$queried;
}
function get_query_var( $name ) {
	return isset( WpStubs::$vars[ $name ] ) ? WpStubs::$vars[ $name ] : '';
}
function is_user_logged_in() {
	return WpStubs::$logged_in;
}
function is_post_type_viewable( $type ) {
	return in_array( $type, array( 'post', 'page' ), true );
}
function wp_create_nonce( $action ) {
	return substr( md5( 'nonce' . $action ), 0, 10 );
}
foreach ( array( 'is_front_page', 'is_home', 'is_feed', 'is_comment_feed', 'is_search', 'is_404', 'is_singular', 'is_page', 'is_archive', 'is_category', 'is_tag', 'is_tax', 'is_author', 'is_post_type_archive', 'is_date', 'is_preview', 'is_customize_preview', 'post_password_required' ) as $ramjet_cache_conditional ) {
	eval( 'function ' . $ramjet_cache_conditional . '() { return ! empty( WpStubs::$is["' . $ramjet_cache_conditional . '"] ); }' ); // phpcs:ignore Squiz.PHP.Eval.Discouraged -- generates the conditional-tag stubs.
}
function __( $text, $domain = 'default' ) {
	return $text;
}
